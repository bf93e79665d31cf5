import { randomBytes } from "node:crypto";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createDb, createWriter, Drainer, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { createScratchDatabase } from "@tether/testkit";
import { sql, type Kysely } from "kysely";
import { buildApp } from "../../../services/annotations-api/src/app.js";

export interface ChurnOptions {
  /** A server whose autovacuum is at its defaults (the command starts one of its own). */
  databaseUrl: string;
  elasticsearchUrl: string;
  /** Length of the paced phase. */
  minutes: number;
  /** Share of the measured maximum write rate the paced phase keeps. Default 0.7. */
  rateFraction?: number;
  /** Length of the closed-loop phase that measures the maximum write rate. Default 20 s. */
  probeSeconds?: number;
  /** Sample length: the report compares the first and the last. Default 60 s. */
  sampleSeconds?: number;
  log?: (line: string) => void;
}

/** One sample (a minute by default) of the paced phase. */
export interface ChurnSample {
  atSecond: number;
  writes: number;
  /** Writes the pacer could not start on time (more than 64 in flight). */
  late: number;
  /** Writes that failed (a network error or a status other than 2xx). */
  failed: number;
  claimP99Ms: number | null;
  claims: number;
  /** createWithJob without the direct sync, in process, 5 a second. */
  createWithJobP99Ms: number | null;
  /** POST /api/annotations as a client sees it (createWithJob + the direct sync). */
  postP99Ms: number | null;
  jobHeapBytes: number;
  jobIndexBytes: number;
  /** At the end of the sample: where autovacuum's once-a-minute cycle happens to be. */
  jobDeadTuples: number;
  /** The most dead tuples seen in the sample (read every 5 s): the top of the vacuum sawtooth. */
  jobDeadTuplesPeak: number;
  jobLiveTuples: number;
  autovacuums: number;
}

export interface ChurnReport {
  minutes: number;
  maxWritesPerSecond: number;
  targetWritesPerSecond: number;
  autovacuum: string;
  samples: ChurnSample[];
}

const p99 = (xs: number[]) => (xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!);

async function jobTableFigures(db: Kysely<any>): Promise<Pick<ChurnSample, "jobHeapBytes" | "jobIndexBytes" | "jobDeadTuples" | "jobLiveTuples" | "autovacuums">> {
  const r = await sql<{ heap: string; idx: string; dead: string; live: string; av: string }>`
    SELECT pg_relation_size('tether.job') AS heap, pg_indexes_size('tether.job') AS idx,
           n_dead_tup AS dead, n_live_tup AS live, autovacuum_count AS av
    FROM pg_stat_user_tables WHERE schemaname = 'tether' AND relname = 'job'`.execute(db);
  const x = r.rows[0]!;
  return { jobHeapBytes: Number(x.heap), jobIndexBytes: Number(x.idx), jobDeadTuples: Number(x.dead), jobLiveTuples: Number(x.live), autovacuums: Number(x.av) };
}

/**
 * The API (in process, direct sync on, 60 s grace) and two drainers under a churn of creates,
 * edits and soft deletes paced at a share of the maximum write rate measured first; every
 * sample records the claim and write latencies and the job table's size and dead tuples, so
 * minute 1 and minute N can be compared (does anything decay as the table churns?).
 */
export async function runChurn(opts: ChurnOptions): Promise<ChurnReport> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const run = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const scratch = await createScratchDatabase(opts.databaseUrl, `tether_churn_${run}`);
  const db = createDb({ connectionString: scratch.url, max: 30, applicationName: "tether-churn" });
  const indexPrefix = `churn_${run}_`;
  const sink = new ElasticsearchSink({ client: opts.elasticsearchUrl, indexPrefix });
  const drainers = [0, 1].map(() => new Drainer({ db, sink, collections: [annotations], intervalMs: 1_000 }));
  const claims: number[] = [];
  const onStage = (m: unknown) => {
    const t = m as { stage: string; ms: number };
    if (t.stage === "claim") claims.push(t.ms);
  };
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    await migrate(db, [annotationMigrations]);
    await sink.ensureIndex(annotations.index, annotations.mappings);
    const autovacuum = (await sql<{ s: string }>`SELECT current_setting('autovacuum') AS s`.execute(db)).rows[0]!.s;
    app = await buildApp({ db, sink, searchSink: sink, directSyncTimeoutMs: 500 });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    const api = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const ids: string[] = [];
    let n = 0;
    const posts: number[] = [];
    const ok = async (r: Response) => {
      await r.arrayBuffer();
      if (!r.ok) throw new Error(`${r.url} answered ${r.status}`);
    };
    /** One write of the churn: 6 in 10 create, 3 edit, 1 soft-deletes (then forgets the id). */
    const write = async () => {
      const i = n++;
      const t = performance.now();
      if (i % 10 === 9 && ids.length > 100) {
        await ok(await fetch(`${api}/api/annotations/${ids.splice(Math.floor(Math.random() * ids.length), 1)[0]}`, { method: "DELETE" }));
      } else if (i % 10 >= 6 && ids.length > 0) {
        const body = JSON.stringify({ text: `edit ${i}` });
        await ok(await fetch(`${api}/api/annotations/${ids[Math.floor(Math.random() * ids.length)]}`, { method: "PATCH", body, headers: { "content-type": "application/json" } }));
      } else {
        const body = JSON.stringify({ uri: `https://example.com/churn/${i % 97}`, text: `churn ${i}`, user: `acct:churn${i % 7}@example.com` });
        const r = await fetch(`${api}/api/annotations`, { method: "POST", body, headers: { "content-type": "application/json" } });
        const json = (await r.json()) as { id?: string };
        posts.push(performance.now() - t);
        if (r.status === 201 && json.id) ids.push(String(json.id));
        else throw new Error(`POST answered ${r.status}`);
      }
    };

    for (const d of drainers) d.start();
    subscribe("tether:drain-stage", onStage);

    // The maximum: 16 clients back to back.
    const probeEnds = Date.now() + (opts.probeSeconds ?? 20) * 1000;
    let probed = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (Date.now() < probeEnds) {
        await write().then(() => probed++, () => undefined);
      }
    }));
    const maxWritesPerSecond = probed / (opts.probeSeconds ?? 20);
    const target = maxWritesPerSecond * (opts.rateFraction ?? 0.7);
    log(`[churn] maximum ${maxWritesPerSecond.toFixed(0)} writes/s; pacing at ${target.toFixed(0)}/s for ${opts.minutes} min (autovacuum ${autovacuum})`);

    const writer = createWriter({});
    const creates: number[] = [];
    let inFlight = 0;
    let late = 0;
    let failed = 0;
    let writes = 0;
    const samples: ChurnSample[] = [];
    const sampleMs = (opts.sampleSeconds ?? 60) * 1000;
    const started = Date.now();
    // Every sample is a full one, the last ending at --minutes (a loop bounded by the end time
    // alone stopped a few milliseconds short of the last sample and reported minute N-1).
    const sampleCount = Math.max(1, Math.floor((opts.minutes * 60_000) / sampleMs));
    claims.length = 0;
    posts.length = 0;
    let nextSample = started + sampleMs;
    let due = performance.now();
    let nextCreate = performance.now();
    let nextPeek = performance.now();
    let deadPeak = 0;
    while (samples.length < sampleCount) {
      const now = performance.now();
      while (due <= now) {
        due += 1000 / target;
        if (inFlight >= 64) {
          late++;
          continue;
        }
        inFlight++;
        writes++;
        void write().catch(() => failed++).finally(() => inFlight--);
      }
      if (now >= nextCreate) {
        nextCreate = now + 200;
        const t = performance.now();
        await writer.createWithJob(db, annotations, { userid: "acct:probe@example.com", target_uri: "https://example.com/probe", text: "probe" });
        creates.push(performance.now() - t);
      }
      if (now >= nextPeek) {
        nextPeek = now + 5000;
        deadPeak = Math.max(deadPeak, (await jobTableFigures(db)).jobDeadTuples);
      }
      if (Date.now() >= nextSample) {
        const figures = await jobTableFigures(db);
        const jobDeadTuplesPeak = Math.max(deadPeak, figures.jobDeadTuples);
        const s: ChurnSample = { atSecond: Math.round((Date.now() - started) / 1000), writes, late, failed, claimP99Ms: p99(claims), claims: claims.length, createWithJobP99Ms: p99(creates), postP99Ms: p99(posts), ...figures, jobDeadTuplesPeak };
        samples.push(s);
        log(`[churn] ${s.atSecond} s: ${writes} writes (${late} late, ${failed} failed), claim p99 ${s.claimP99Ms?.toFixed(1)} ms (${s.claims}), createWithJob p99 ${s.createWithJobP99Ms?.toFixed(1)} ms, POST p99 ${s.postP99Ms?.toFixed(1)} ms, tether.job ${(s.jobHeapBytes / 1024).toFixed(0)} kB + ${(s.jobIndexBytes / 1024).toFixed(0)} kB index, ${s.jobDeadTuples} dead (peak ${jobDeadTuplesPeak}) / ${s.jobLiveTuples} live, ${s.autovacuums} autovacuums`);
        claims.length = 0;
        posts.length = 0;
        creates.length = 0;
        deadPeak = 0;
        writes = 0;
        late = 0;
        failed = 0;
        nextSample += sampleMs;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(due, nextCreate) - performance.now())));
    }
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
    return { minutes: opts.minutes, maxWritesPerSecond, targetWritesPerSecond: target, autovacuum, samples };
  } finally {
    unsubscribe("tether:drain-stage", onStage);
    await Promise.all(drainers.map((d) => d.stop()));
    await app?.close();
    await db.destroy();
    await fetch(new URL(`/${indexPrefix}*?expand_wildcards=all`, opts.elasticsearchUrl), { method: "DELETE" }).catch(() => undefined);
    await sink.close();
    await scratch.drop();
  }
}
