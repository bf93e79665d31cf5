import { sql } from "kysely";
import { expectRelated } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import type { HistorySystem } from "./history-system.js";

/**
 * The shop a history starts from, so that its first commands already reach documents: a
 * category read by three products (a fan-out of three chunks), a tag linked to three, an open
 * order with lines on two, stock on two. Written by plain SQL with capture on (the history's
 * drainers sync it), and into the model.
 */
export async function seedRelated(sys: HistorySystem, model: HistoryModel): Promise<void> {
  await sql`
    INSERT INTO shop_category (id, name) VALUES (1, 'Tools'), (2, 'Garden');
    INSERT INTO shop_product (id, name, category_id) VALUES (1, 'hammer', 1), (2, 'saw', 1), (3, 'drill', 1), (4, 'rake', 2);
    INSERT INTO shop_stock (product_id, quantity) VALUES (1, 5), (2, 0);
    INSERT INTO shop_tag (id, name) VALUES (1, 'sale'), (2, 'new');
    INSERT INTO shop_product_tag (product_id, tag_id) VALUES (1, 1), (2, 1), (3, 1), (4, 2);
    INSERT INTO shop_order (id, status) VALUES (1, 'open'), (2, 'closed');
    INSERT INTO shop_order_line (id, order_id, product_id, quantity) VALUES (1, 1, 1, 2), (2, 1, 2, 1), (3, 2, 3, 4)`.execute(sys.db);
  const m = model.related;
  m.parents.category.set("1", "Tools").set("2", "Garden");
  for (const [id, name, category] of [["1", "hammer", "1"], ["2", "saw", "1"], ["3", "drill", "1"], ["4", "rake", "2"]] as const) m.products.set(id, { name, category, deleted: false });
  m.stock.set("1", 5).set("2", 0);
  m.parents.tag.set("1", "sale").set("2", "new");
  for (const l of ["1:1", "2:1", "3:1", "4:2"]) m.links.add(l);
  m.parents.order.set("1", "open").set("2", "closed");
  m.lines.set("1", { order: "1", product: "1", quantity: 2 }).set("2", { order: "1", product: "2", quantity: 1 }).set("3", { order: "2", product: "3", quantity: 4 });
  await expectRelated(sys, model, "the shop the history starts from");
}
