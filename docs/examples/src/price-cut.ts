import { sql } from "kysely";
import { createDb, createWriter, nextVersion } from "@tether/core";
import config from "../tether.config.ts";
import { products, type ProductRow } from "./products-collection.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL! });
const writer = createWriter({ sink: config.sink({ url: process.env.ELASTICSEARCH_URL }) });

// Your own statement: it bumps the version with nextVersion (never `version + 1` on an insert or
// a key change), and returns the rows it changed; each gets its job in the same transaction.
export async function cutPrices(percent: number) {
  return writer.writeWithJobs(db, products, async (trx) => {
    const rows = await trx
      .updateTable("product")
      .set({ price_cents: sql<number>`round(price_cents * (100 - ${percent}::numeric) / 100)`, version: nextVersion("version") })
      .where("deleted_at", "is", null)
      .returningAll()
      .execute();
    return rows.map((row) => ({ id: String(row.id), row: row as ProductRow }));
  });
}
