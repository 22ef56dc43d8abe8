// A ustar archive (POSIX.1-1988) of text files, for the export a browser downloads as one file and
// `tar -xf` turns back into the folder CONFIG_IMPORT reads. Only what that needs: regular files and
// the folders above them, no links, no long-name extensions (a path that fits neither the name nor
// the prefix+name fields is refused rather than cut).
const BLOCK = 512;

/** Writes `value` as a NUL-terminated octal number filling `length` bytes (the ustar numeric field). */
function octal(header: Buffer, offset: number, length: number, value: number) {
  header.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

/** Splits a path into ustar's prefix (155 bytes) and name (100 bytes) at a slash. */
function splitPath(path: string): { prefix: string; name: string } {
  if (Buffer.byteLength(path) <= 100) return { prefix: '', name: path };
  for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
    const prefix = path.slice(0, slash);
    const name = path.slice(slash + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { prefix, name };
  }
  throw new Error(`tar: the path ${path} is too long for a ustar header`);
}

function header(path: string, size: number, type: 'file' | 'folder', mtime: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  const { prefix, name } = splitPath(path);
  block.write(name, 0, 100, 'utf8');
  octal(block, 100, 8, type === 'folder' ? 0o755 : 0o644);
  octal(block, 108, 8, 0); // uid
  octal(block, 116, 8, 0); // gid
  octal(block, 124, 12, size);
  octal(block, 136, 12, mtime);
  block.write(type === 'folder' ? '5' : '0', 156, 1, 'ascii');
  block.write('ustar\0', 257, 6, 'ascii');
  block.write('00', 263, 2, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  // The checksum is summed with its own field read as eight spaces.
  block.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

/** The archive of `files` (path -> text), each folder on a path listed once before what it holds. */
export function tarArchive(files: Map<string, string>, modified = new Date()): Buffer {
  const mtime = Math.floor(modified.getTime() / 1000);
  const blocks: Buffer[] = [];
  const folders = new Set<string>();
  for (const [path, text] of files) {
    const parts = path.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const folder = `${parts.slice(0, depth).join('/')}/`;
      if (folders.has(folder)) continue;
      folders.add(folder);
      blocks.push(header(folder, 0, 'folder', mtime));
    }
    const content = Buffer.from(text, 'utf8');
    blocks.push(header(path, content.length, 'file', mtime), content, Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK));
  }
  // The end of the archive: two blocks of zeros.
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}
