// Package document is the document model of airshipctl: a Bundle is the
// output of an in-process kustomize build (krusty) of one kustomize root, a
// Document is one object of it, and a Selector picks documents by
// group/version/kind, name, namespace, labels and annotations.
//
// Every document remembers the file it came from (kustomize's origin
// annotation, added during the build and removed from the output), so
// errors can name kind/name and file. Lookups that fail say what was asked
// for and what the bundle has instead.
//
// A build never executes anything: kustomize runs with its builtin
// plugins only and the built-in KRM functions run in process (fn.Runner,
// the default BuildOptions.Functions); any other function config fails
// the build naming it and its file. With BuildOptions.Confine (a site's
// targetPath, which phase.LoadSite sets), a file of that directory that a
// symbolic link leads outside it is refused with an *OutsideError naming
// the link, before anything of it is read.
//
// A large root whose kustomization transforms resource by resource (a
// flat list of files under prefixes, labels, targeted patches and
// replacements) is built in parts, on every CPU, and the parts put back
// together in kustomize's order (split.go): kustomize's own cost grows
// with the square of a root's resources. Resources that reference each
// other stay in one part, replacement sources go in every part, and the
// outputs are checked against the inputs; a root the split cannot prove
// to give the plain build's bytes is built whole.
package document
