// What the empty chat offers to ask, made from the open project's own files: its manifest, its
// main language and the folder that holds most of it, so that trying a suggestion works here
// instead of asking about a cart in a project that has none.

/** Manifests whose version question a project answers, in the order they are preferred. */
const MANIFESTS = ["package.json", "Cargo.toml", "pyproject.toml", "setup.cfg", "setup.py"];

const LANGUAGES: Record<string, string> = {
  ts: "TypeScript",
  tsx: "TypeScript",
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  py: "Python",
  rs: "Rust",
  go: "Go",
  java: "Java",
  kt: "Kotlin",
  rb: "Ruby",
  c: "C",
  cpp: "C++",
  cs: "C#",
  php: "PHP",
  swift: "Swift",
};

/** When the folder shows nothing to go by. */
const FALLBACK = ["What files are in this folder?"];

function extension(path: string): string | null {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : null;
}

function folderOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : path.slice(0, slash);
}

/** The key that occurs most often (the first to reach the count wins a tie). */
function mostCommon(keys: string[]): string | null {
  const counts = new Map<string, number>();
  let best: string | null = null;
  for (const key of keys) {
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    if (best === null || count > (counts.get(best) ?? 0)) best = key;
  }
  return best;
}

/** Up to three questions this project can answer, from its file paths (sorted, relative). */
export function suggestionsFor(files: string[]): string[] {
  const suggestions: string[] = [];
  const manifest = MANIFESTS.find((name) => files.includes(name));
  if (manifest) suggestions.push(`What version is in ${manifest}?`);
  const source = files.filter((f) => LANGUAGES[extension(f) ?? ""] !== undefined);
  const ext = mostCommon(source.map((f) => extension(f) ?? ""));
  if (ext) {
    const ofLanguage = source.filter((f) => extension(f) === ext);
    const folder = mostCommon(ofLanguage.map(folderOf)) ?? ".";
    const where = folder === "." ? "at the top of the project" : `in ${folder}`;
    suggestions.push(`Which ${LANGUAGES[ext]} files are ${where}?`);
    const example = ofLanguage.find((f) => folderOf(f) === folder);
    if (example) suggestions.push(`What does ${example} do?`);
  }
  return suggestions.length > 0 ? suggestions : FALLBACK;
}
