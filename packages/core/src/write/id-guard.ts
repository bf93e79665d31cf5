import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { canonicalEntityId, idTypeClass } from "../entity-id.js";
import { ValidationError } from "../errors.js";
import { identityIdsInRule, idColumnType } from "../store/collection-store.js";

/**
 * The writer's side of the id rule (../entity-id.ts): an id the drainer would refuse is refused
 * here, before COMMIT, with a ValidationError naming it. The column's type is read from the
 * catalog once per collection (when the collection does not declare `idType`).
 */
export class IdGuard {
  private readonly types = new WeakMap<Collection<any>, Promise<string | undefined>>();
  private readonly generated = new WeakMap<Collection<any>, Promise<boolean>>();

  private typeOf(db: Kysely<any>, collection: Collection<any>): Promise<string | undefined> {
    if (collection.idType) return Promise.resolve(collection.idType);
    let type = this.types.get(collection);
    if (!type) {
      type = idColumnType(db, collection);
      // A failed look-up (the transaction aborted) is asked again next time, not remembered.
      type.catch(() => this.types.delete(collection));
      this.types.set(collection, type);
    }
    return type;
  }

  /**
   * Whether every id the table generates by itself is inside the rule, so a row written with a
   * generated id needs no check after the statement: a uuid column, or an identity column whose
   * sequence stays at 1 or above. Read from the catalog once per collection.
   */
  async generatedIdsInRule(db: Kysely<any>, collection: Collection<any>): Promise<boolean> {
    let known = this.generated.get(collection);
    if (!known) {
      known = this.typeOf(db, collection).then((type) => {
        const cls = idTypeClass(type);
        return cls === "uuid" || (cls === "integer" && identityIdsInRule(db, collection));
      });
      known.catch(() => this.generated.delete(collection));
      this.generated.set(collection, known);
    }
    return known;
  }

  /** Throws ValidationError for the first id outside the rule. */
  async check(db: Kysely<any>, collection: Collection<any>, ids: readonly unknown[]): Promise<void> {
    if (ids.length === 0) return;
    const type = await this.typeOf(db, collection);
    for (const id of ids) {
      const c = canonicalEntityId(type, id);
      if ("error" in c) throw new ValidationError(collection.idColumn, `${c.error} (${collection.name}: nothing was written)`);
    }
  }
}
