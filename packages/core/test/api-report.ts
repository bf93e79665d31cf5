import ts from "typescript";

const FLAGS = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;

// Members declared by the package itself and visible to callers: not private, not inherited
// from Node's or a dependency's types (EventEmitter's methods), not symbol-keyed.
function ownPublicMember(prop: ts.Symbol): boolean {
  const decls = prop.declarations ?? [];
  if (prop.getName().startsWith("__@") || decls.length === 0) return false;
  return decls.every((d) => !d.getSourceFile().fileName.includes("/node_modules/") && !(ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)));
}

function describeExport(checker: ts.TypeChecker, exported: ts.Symbol): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const decl = symbol.declarations?.[0];
  const name = exported.getName();
  const kinds: string[] = [];
  const lines: string[] = [];
  if (symbol.flags & ts.SymbolFlags.Class) kinds.push("class");
  else if (symbol.flags & ts.SymbolFlags.Function) kinds.push("function");
  else if (symbol.flags & ts.SymbolFlags.Variable) kinds.push("const");
  if (symbol.flags & ts.SymbolFlags.Interface) kinds.push("interface");
  if (symbol.flags & ts.SymbolFlags.TypeAlias) kinds.push("type");
  if (decl && symbol.flags & ts.SymbolFlags.Value) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, decl);
    for (const sig of type.getCallSignatures()) lines.push(`  call ${checker.signatureToString(sig, undefined, FLAGS)}`);
    for (const sig of type.getConstructSignatures()) lines.push(`  new ${checker.signatureToString(sig, undefined, FLAGS)}`);
    if (lines.length === 0) lines.push(`  : ${checker.typeToString(type, undefined, FLAGS)}`);
  }
  if (decl && symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class)) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    if (symbol.flags & ts.SymbolFlags.TypeAlias) lines.push(`  = ${checker.typeToString(type, undefined, FLAGS)}`);
    else {
      for (const prop of checker.getPropertiesOfType(type).filter(ownPublicMember)) {
        const optional = prop.flags & ts.SymbolFlags.Optional ? "?" : "";
        lines.push(`  .${prop.getName()}${optional}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(prop, decl), undefined, FLAGS)}`);
      }
    }
  }
  return [`${kinds.join(" & ")} ${name}`, ...lines].join("\n");
}

/**
 * The public surface of an entry point as text: every export with its kind and its signature
 * (members of interfaces and classes, call signatures of functions). Committed beside the
 * package; a test fails when it changes, so an export change is always a visible diff.
 */
export function apiReport(entry: string, tsconfig: string): string {
  const config = ts.getParsedCommandLineOfConfigFile(tsconfig, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error(`cannot read ${tsconfig}`);
  const program = ts.createProgram([entry], { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`no module symbol for ${entry}`);
  const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.getName().localeCompare(b.getName()));
  return `${exports.map((e) => describeExport(checker, e)).join("\n\n")}\n`;
}
