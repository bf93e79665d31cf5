import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { findJdkHome } from "./java-home.js";
import { cacheDir, repoRoot } from "./repo-paths.js";
import { runCommand } from "./run-command.js";

/** The plugin's name: its folder under the node's `plugins/`. */
export const TEST_ANALYSIS_PLUGIN = "tether-test-analysis";
const SOURCE_DIR = join("packages", "testkit", "es-test-analysis", "src");

function javaSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? javaSources(join(dir, e.name)) : e.name.endsWith(".java") ? [join(dir, e.name)] : []));
}

/**
 * The plugin `es-test-analysis` (the analysis components the `.security` index needs, which the
 * integ-test distribution leaves out), compiled against the distribution's own jars in
 * `esHome/lib` and ready to copy into a node's `plugins/`. Built once per source and
 * Elasticsearch version (the folder's name is their hash), under .cache.
 *
 * @example
 * cpSync(await ensureTestAnalysisPlugin(install.home, "8.19.21"), join(home, "plugins", TEST_ANALYSIS_PLUGIN), { recursive: true });
 */
export async function ensureTestAnalysisPlugin(esHome: string, esVersion: string): Promise<string> {
  const root = repoRoot();
  const sources = javaSources(join(root, SOURCE_DIR)).sort();
  const hash = createHash("sha256").update(esVersion);
  for (const s of sources) hash.update(relative(root, s)).update(readFileSync(s));
  const built = join(cacheDir(), "es-test-analysis", hash.digest("hex").slice(0, 16));
  if (existsSync(join(built, "plugin-descriptor.properties"))) return built;

  const jdk = await findJdkHome(17);
  const work = `${built}.${process.pid}.tmp`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, "classes"), { recursive: true });
  const javac = await runCommand(join(jdk, "bin", "javac"), ["--release", "17", "-cp", join(esHome, "lib", "*"), "-d", join(work, "classes"), ...sources], { timeoutMs: 300_000 });
  if (javac.code !== 0) throw new Error(`javac ${SOURCE_DIR} failed (exit ${javac.code}): ${(javac.stdout + javac.stderr).slice(-2000)}`);
  const jarFile = join(work, `${TEST_ANALYSIS_PLUGIN}.jar`);
  const jar = await runCommand(join(jdk, "bin", "jar"), ["cf", jarFile, "-C", join(work, "classes"), "."], { timeoutMs: 120_000 });
  if (jar.code !== 0) throw new Error(`jar ${jarFile} failed (exit ${jar.code}): ${jar.stderr.slice(-2000)}`);
  rmSync(join(work, "classes"), { recursive: true });
  writeFileSync(
    join(work, "plugin-descriptor.properties"),
    [
      `name=${TEST_ANALYSIS_PLUGIN}`,
      "description=The analysis components the .security index mapping names (uax_url_email, pattern_capture, lowercase, unique), for test nodes without analysis-common",
      "version=1.0.0",
      "classname=tether.testanalysis.TestAnalysisPlugin",
      "java.version=17",
      `elasticsearch.version=${esVersion}`,
      "",
    ].join("\n"),
  );
  try {
    renameSync(work, built);
  } catch (e) {
    // Another process built the same folder meanwhile: theirs is as good as ours.
    if (!existsSync(join(built, "plugin-descriptor.properties"))) throw e;
    rmSync(work, { recursive: true, force: true });
  }
  return built;
}
