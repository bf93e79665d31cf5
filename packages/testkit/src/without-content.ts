import type { DownstreamState } from "@tether/core";

/**
 * Downstream states without their content hashes, for assertions on versions and tombstones
 * alone (the hash is the body's, asserted where the body matters).
 */
export function withoutContent(states: ReadonlyMap<string, DownstreamState>): Map<string, DownstreamState> {
  return new Map([...states].map(([id, { version, deleted }]) => [id, { version, deleted }]));
}
