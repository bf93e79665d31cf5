import { createDb, evaluateAlerts } from "@tether/core";
import config from "../tether.config.ts";

const db = createDb({ connectionString: process.env.DATABASE_URL! });

// GET /alerts for your own monitoring: 503 while any of the eight alerts fires.
export async function alertsHandler(): Promise<{ status: number; body: unknown }> {
  const report = await evaluateAlerts(db, config.options?.alerts);
  return { status: report.firing ? 503 : 200, body: report };
}
