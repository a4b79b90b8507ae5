// Package docset decodes and validates a set of Promenade documents (the
// site's Promenade configuration).
//
// A configuration set is a list of YAML documents of the form
// schema/metadata/data. Decode splits and parses files; Validate checks
// every document against the JSON schema shipped in schemas/ (embedded in
// the binary) and reports every problem at once, each naming the file, the
// document (schema and metadata.name) and the field. A Set gives typed
// access to the documents of a validated configuration.
package docset
