// Minimal types for the parts of sql.js (SQLite compiled to WebAssembly) the cache benchmark uses.
declare module 'sql.js' {
  interface Statement {
    bind(values: (string | number)[]): boolean;
    step(): boolean;
    get(): (string | number | null)[];
    reset(): void;
  }
  interface Database {
    run(sql: string, params?: (string | number)[]): Database;
    prepare(sql: string): Statement;
  }
  interface SqlJsStatic {
    Database: new () => Database;
  }
  function initSqlJs(): Promise<SqlJsStatic>;
  export default initSqlJs;
}
