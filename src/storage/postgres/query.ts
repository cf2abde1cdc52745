import type { QueryResult, QueryResultRow } from 'pg';

/** One statement on a connection the store has taken from the pool and guards. */
export type Query = <R extends QueryResultRow = QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) => Promise<QueryResult<R>>;
