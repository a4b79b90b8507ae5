// Package chartsource loads the chart an ArmadaChart's source points at: a
// chart directory on the operator's filesystem (types local and dir) or a
// gzipped archive on disk or served over HTTP(S) by an in-site chart server
// (type tar). It also computes the digest that tells the controller whether a
// release must be upgraded.
//
// Everything it reads is bounded. A path is read below Loader.Root or a
// Mount only, ".." cleaned away and every symlink resolved (a location, or a
// file or directory of a chart, that leads outside is ErrInvalid, and so is
// a symlink loop). An archive is at most MaxArchiveBytes as read and
// MaxUnpackedBytes and MaxArchiveFiles once decompressed, checked before
// Helm's loader unpacks it. An HTTP(S) fetch uses httplimit's client (connect
// and TLS handshake bounded, a deadline from connecting to the last byte,
// the body capped) and never shows a URL's user information or query.
//
// Loader.Load fetches synchronously. Loader.LoadFor, with a Fetcher, never
// waits on a remote server: the Fetcher runs at most one fetch per URL in the
// background, bounded overall (FetchOptions.MaxFetches) and per host
// (MaxFetchesPerHost), returns ErrFetching meanwhile and notifies each waiter
// when its fetch ends; a fetched archive is reused for the TTL and then
// refreshed in the background, a failure is reported to each waiter once.
package chartsource
