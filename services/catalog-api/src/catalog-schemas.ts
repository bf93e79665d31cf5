import { Type, type Static } from "typebox";
import type { ProductDocumentRow } from "./catalog-db.js";

const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

export const Uuid = Type.String({ pattern: UUID_PATTERN });
export const IdParams = Type.Object({ id: Uuid });

const Name = Type.String({ minLength: 1, maxLength: 200 });
const PriceCents = Type.Integer({ minimum: 0, maximum: 2_000_000_000 });
const Quantity = Type.Integer({ minimum: 0, maximum: 2_000_000_000 });

export const CategoryBody = Type.Object({ name: Name }, { additionalProperties: false });

export const CreateProductBody = Type.Object(
  {
    sku: Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_.-]+$" }),
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    priceCents: PriceCents,
    categoryId: Uuid,
    stock: Type.Optional(Quantity),
  },
  { additionalProperties: false },
);

export const PatchProductBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    priceCents: Type.Optional(PriceCents),
    categoryId: Type.Optional(Uuid),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const StockBody = Type.Object({ quantity: Quantity }, { additionalProperties: false });

/** A bulk price change: every live product of a category, or a list of ids, by a percentage. */
export const PriceChangeBody = Type.Object(
  {
    categoryId: Type.Optional(Uuid),
    ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 10_000 })),
    percent: Type.Number({ minimum: -90, maximum: 1000 }),
  },
  { additionalProperties: false },
);

export const SearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    categoryId: Type.Optional(Uuid),
    minPriceCents: Type.Optional(Type.String({ pattern: "^[0-9]{1,10}$" })),
    maxPriceCents: Type.Optional(Type.String({ pattern: "^[0-9]{1,10}$" })),
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,3}$" })),
  },
  { additionalProperties: false },
);

/** A re-index by one of the product collection's scopes (category, updated, ids) or "all". */
export const ReindexBody = Type.Object(
  {
    scope: Type.String({ minLength: 1, maxLength: 64 }),
    value: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from: Type.Optional(Type.String({ maxLength: 64 })),
    to: Type.Optional(Type.String({ maxLength: 64 })),
    ids: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 100_000 })),
    force: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type CreateProduct = Static<typeof CreateProductBody>;
export type PatchProduct = Static<typeof PatchProductBody>;
export type PriceChange = Static<typeof PriceChangeBody>;

/** What the API answers for a product. */
export interface ProductView {
  id: string;
  version: number;
  sku: string;
  name: string;
  description: string;
  priceCents: number;
  categoryId: string;
  categoryName: string;
  stock: number;
  createdAt: string;
  updatedAt: string;
}

export function present(p: ProductDocumentRow): ProductView {
  return {
    id: p.id,
    version: Number(p.version),
    sku: p.sku,
    name: p.name,
    description: p.description,
    priceCents: p.price_cents,
    categoryId: p.category_id,
    categoryName: p.category_name,
    stock: Number(p.stock),
    createdAt: p.created_at.toISOString(),
    updatedAt: p.updated_at.toISOString(),
  };
}
