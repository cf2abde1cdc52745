// How the page names a run to the server: in the query (`?id=…`), percent-encoded as
// encodeURIComponent writes it. Not in the path: a URL parser removes the dot segments `.` and
// `..` (and their `%2E` spellings), so a run with such an id could not be asked for there. An id
// with a lone surrogate has no encoding (and no journal stores one): it is named `undefined`,
// never a thrown URIError.

/** `?id=…` naming the run `runId`, or `undefined` when no URL can name it. */
export function runQuery(runId) {
  try {
    return '?id=' + encodeURIComponent(runId);
  } catch {
    return undefined;
  }
}
