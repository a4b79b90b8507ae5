// Package promenade holds the Go types of Promenade's configuration
// documents. They are not Kubernetes objects: each document is a YAML
// mapping of the form
//
//	schema: promenade/<Kind>/v1
//	metadata:
//	  schema: metadata/Document/v1
//	  name: <name>
//	data: <kind-specific>
//
// and the types in v1 describe the data part. Validation is done against
// the JSON schemas shipped in internal/promenade/docset/schemas.
package promenade
