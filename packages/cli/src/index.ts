/**
 * @tether/cli — the `tether` operator CLI; the pieces verbs share, for verbs added elsewhere.
 *
 * @packageDocumentation
 * @module @tether/cli
 */
export { openCliContext, type CliContext, type CliContextOptions } from "./cli-context.js";
export { CommandFailedError, UsageError, EXIT_FAILURE, EXIT_OK, EXIT_TIMEOUT, EXIT_USAGE, EXIT_WORK_LEFT } from "./cli-errors.js";
export { describeCliError, type CliErrorReport, type CliTargets } from "./describe-cli-error.js";
export { intOption, listOption, output, pickCollection, table, withCommonOptions, withContext, type CommonOptions } from "./command-kit.js";
export { createProgram } from "./program.js";
