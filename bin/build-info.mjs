// Whether dist/ (compiled by scripts/build.mjs at install) is as new as src/.
import fs from 'node:fs';
import path from 'node:path';

export const BUILD_INFO = 'build-info.json';

/** The newest modification time under a folder: a file edited after the build makes dist/ stale. */
export const newestSourceMs = (dir) => {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMs(file) : fs.statSync(file).mtimeMs);
  }
  return newest;
};

/** dist/ was built from the sources as they are now. */
export const builtIsFresh = (root) => {
  try {
    const info = JSON.parse(fs.readFileSync(path.join(root, 'dist', BUILD_INFO), 'utf8'));
    return info.sourcesNewestMs >= newestSourceMs(path.join(root, 'src'));
  } catch {
    return false;
  }
};
