/** Postgres SQLSTATE codes tether reacts to. */
export const PgErrorCode = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
  notNullViolation: "23502",
  checkViolation: "23514",
  invalidTextRepresentation: "22P02",
  numericValueOutOfRange: "22003",
  queryCanceled: "57014",
  lockNotAvailable: "55P03",
  idleInTransactionTimeout: "25P03",
  adminShutdown: "57P01",
  crashShutdown: "57P02",
  cannotConnectNow: "57P03",
  tooManyConnections: "53300",
  serializationFailure: "40001",
  deadlockDetected: "40P01",
  undefinedTable: "42P01",
  invalidSchemaName: "3F000",
  invalidPassword: "28P01",
  invalidAuthorization: "28000",
  invalidCatalogName: "3D000",
} as const;

/**
 * SQLSTATE class 22: data exceptions (a value the column type cannot hold: NUL in text, a
 * date out of range, a number too large). From user input it means a validation gap.
 */
export const PG_DATA_EXCEPTION_CLASS = "22";

/** SQLSTATE class 08: connection exceptions. */
export const PG_CONNECTION_EXCEPTION_CLASS = "08";

/** The SQLSTATE of a pg error, if it is one. */
export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
