import { makeValidator, str } from "envalid";

function integer(test: (n: number) => boolean, message: string) {
  return makeValidator<number>((input) => {
    const n = Number(input);
    if (!Number.isInteger(n) || !test(n)) throw new Error(message);
    return n;
  });
}

/** A TCP port where 0 means "any free port" (envalid's `port` rejects 0). */
export const listenPort = integer((n) => n >= 0 && n <= 65_535, "must be an integer in 0..65535");
export const positiveInt = integer((n) => n > 0, "must be a positive integer");
export const nonNegativeInt = integer((n) => n >= 0, "must be a non-negative integer");

/** LOG_LEVEL: one of pino's levels, default "info". */
export const logLevel = () => str({ default: "info", choices: ["fatal", "error", "warn", "info", "debug", "trace", "silent"] });
