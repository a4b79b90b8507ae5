// Package document is the document model of airshipctl: a Bundle is the
// output of an in-process kustomize build (krusty) of one kustomize root, a
// Document is one object of it, and a Selector picks documents by
// group/version/kind, name, namespace, labels and annotations.
//
// Every document remembers the file it came from (kustomize's origin
// annotation, added during the build and removed from the output), so
// errors can name kind/name and file. Lookups that fail say what was asked
// for and what the bundle has instead.
package document
