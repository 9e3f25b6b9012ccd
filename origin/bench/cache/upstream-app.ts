/**
 * The upstream application of the cache benchmark, in its own process: a product catalogue
 * in SQLite (sql.js, SQLite compiled to WebAssembly, in memory), each page rendered per
 * request from two queries (the category's 40 dearest items, and its count and average
 * price) and an HTML template. No sleep: the cost is the query and the render.
 *
 * argv: <objects>. Page /p/<n>.html for n in [0, objects); each page's size is fixed by n
 * (2 to 32 KB: padding text), so that sizes differ as on a real site and Weighted-LFU has
 * something to weigh. Cacheable for 10 minutes, with an ETag.
 * GET /__stats: { requests, bytes } served so far. Prints "READY <port>".
 */
import { createServer } from 'node:http';
import initSqlJs from 'sql.js';
import { pageSizeBytes } from './site.js';

const objects = Number(process.argv[2] ?? 1000);
const ITEMS = 20_000;
const CATEGORIES = 200;

const SQL = await initSqlJs();
const db = new SQL.Database();
db.run('CREATE TABLE items (id INTEGER PRIMARY KEY, category INTEGER, title TEXT, price REAL)');
db.run('BEGIN');
const insert = db.prepare('INSERT INTO items VALUES (?, ?, ?, ?)');
for (let id = 0; id < ITEMS; id += 1) {
  insert.bind([id, (id * 7919) % CATEGORIES, `Item ${id} ${'abcdefghij'.slice(id % 10)}`, ((id * 104729) % 100_000) / 100]);
  insert.step();
  insert.reset();
}
db.run('COMMIT');
// No index on category: each page scans the table, as a modest real query does.
const dearest = db.prepare('SELECT id, title, price FROM items WHERE category = ? ORDER BY price DESC LIMIT 40');
const summary = db.prepare('SELECT count(*), avg(price) FROM items WHERE category = ?');

const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

function render(page: number): string {
  const category = page % CATEGORIES;
  dearest.bind([category]);
  const rows: string[] = [];
  while (dearest.step()) {
    const [id, title, price] = dearest.get();
    rows.push(`<tr><td><a href="/p/${Number(id) % objects}.html">${escapeHtml(String(title))}</a></td><td>${Number(price).toFixed(2)}</td></tr>`);
  }
  dearest.reset();
  summary.bind([category]);
  summary.step();
  const [count, average] = summary.get();
  summary.reset();
  const head = `<!doctype html><html><head><title>Page ${page}</title><link rel="stylesheet" href="/site.css"></head><body><h1>Category ${category}</h1><p>${String(count)} items, average ${Number(average).toFixed(2)}</p><table>${rows.join('')}</table>`;
  const target = pageSizeBytes(page);
  const filler = target > head.length + 20 ? `<p>${'Lorem ipsum dolor sit amet. '.repeat(Math.ceil((target - head.length) / 28)).slice(0, target - head.length - 20)}</p>` : '';
  return `${head}${filler}</body></html>`;
}

let requests = 0;
let bytes = 0;
const server = createServer((request, response) => {
  const url = request.url ?? '/';
  if (url === '/__stats') {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ requests, bytes }));
    return;
  }
  const match = /^\/p\/(\d+)\.html$/.exec(url);
  const page = match === null ? -1 : Number(match[1]);
  if (page < 0 || page >= objects) {
    response.statusCode = 404;
    response.end('not found');
    return;
  }
  const body = Buffer.from(render(page), 'utf8');
  requests += 1;
  bytes += body.byteLength;
  response.setHeader('content-type', 'text/html; charset=utf-8');
  response.setHeader('cache-control', 'public, max-age=600');
  response.setHeader('etag', `"p${page}-v1"`);
  response.setHeader('content-length', body.byteLength);
  response.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`READY ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
