// The file tree, built from the flat list of workspace-relative paths the backend returns.

export interface TreeFolder {
  name: string;
  path: string;
  folders: TreeFolder[];
  files: { name: string; path: string }[];
}

/** Folders first, then files, each sorted by name. */
export function buildTree(paths: readonly string[]): TreeFolder {
  const root: TreeFolder = { name: "", path: "", folders: [], files: [] };
  const byPath = new Map<string, TreeFolder>([["", root]]);
  for (const path of paths) {
    const parts = path.split("/");
    const name = parts.pop();
    if (!name) continue;
    let folder = root;
    let prefix = "";
    for (const part of parts) {
      prefix = prefix ? `${prefix}/${part}` : part;
      let next = byPath.get(prefix);
      if (!next) {
        next = { name: part, path: prefix, folders: [], files: [] };
        byPath.set(prefix, next);
        folder.folders.push(next);
      }
      folder = next;
    }
    folder.files.push({ name, path });
  }
  const sort = (folder: TreeFolder) => {
    folder.folders.sort((a, b) => a.name.localeCompare(b.name));
    folder.files.sort((a, b) => a.name.localeCompare(b.name));
    folder.folders.forEach(sort);
  };
  sort(root);
  return root;
}

/** The folders that contain `path`, outermost first ("src", "src/app" for "src/app/x.ts"). */
export function ancestors(path: string): string[] {
  const parts = path.split("/").slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}
