/**
 * The files the newcomer test adds to the README's own ones: a driver that calls the README's
 * handlers, a config with no options (README step 6 must compile against it too), the
 * newcomer's second application table adopted as a deploy step, and a strict tsconfig.
 */
export const APP_FILES: Record<string, string> = {
  "run-readme-app.ts": `// Calls the README's handlers as the newcomer's API would: one create, one GET /alerts.
import { alertsHandler } from "./src/alerts-route.ts";
import { createProduct } from "./src/create-product.ts";

const row = await createProduct({ name: "Teapot", priceCents: 2450 });
const alerts = await alertsHandler();
process.stdout.write(JSON.stringify({ id: String(row?.id), version: String(row?.version), alerts }));
// The README's modules keep their pools open, as a server's would.
process.exit(0);
`,
  "helpdesk.config.ts": `import { defineCollection, defineConfig } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";

interface TicketRow {
  id: string;
  subject: string;
  status: string;
  version: string;
}

// The newcomer's own table, populated long before Tether: adopted as a deploy step.
export const tickets = defineCollection<TicketRow>({
  name: "ticket",
  table: "ticket",
  index: "tickets",
  toDocument: (row) => ({ subject: row.subject, status: row.status }),
  mappings: { properties: { subject: { type: "text" }, status: { type: "keyword" } } },
});

export default defineConfig({ collections: [tickets], sink: elasticsearch() });
`,
  "tsconfig.json": `${JSON.stringify(
    {
      compilerOptions: {
        target: "ES2023",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        erasableSyntaxOnly: true,
        skipLibCheck: false,
        types: ["node"],
      },
      include: ["*.ts", "src", "no-options"],
    },
    null,
    2,
  )}\n`,
};

/** A valid config that sets no options, beside copies of the README's src files. */
export const NO_OPTIONS_CONFIG = `import { defineConfig } from "@tether/core";
import { elasticsearch } from "@tether/elasticsearch";
import { products } from "./src/products-collection.ts";

export default defineConfig({ collections: [products], sink: elasticsearch() });
`;
