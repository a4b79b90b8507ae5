// Package fn holds the KRM functions Airship site trees reference from
// their kustomizations, built in, so that rendering a site needs no
// container runtime:
//
//   - ReplacementTransformer (airshipit.org/v1alpha1) copies a value from a
//     field of one document, or a literal, into fields of others. Field
//     paths are upstream's: spec.template.spec.containers[name=foo].image,
//     spec.containers.0.image, data.key, JSONPath in braces
//     ({.spec.containers[?(@.name == 'foo')].image}), and a trailing
//     %PATTERN% that replaces only the regular expression PATTERN inside a
//     string (or each string of a list). Missing map fields are created;
//     a Secret's data is base64-decoded when read and encoded when written.
//   - Templater (airshipit.org/v1alpha1) renders a Go text/template over
//     values with the sprig functions and upstream's own: genCAEx,
//     genCAWithKeyEx, genSignedCertEx, genSignedCertWithKeyEx,
//     genSSHKeyPair, regexGen, toYaml, toUint32, include, fileExists,
//     getItems and setItems, and the kyaml helpers KFilter, KPipe,
//     KOneFilter, KYFilter, YFilter, YPipe, YOneFilter, YValue, YMerge,
//     YListAppend and StrToY. The documents it renders are appended to the
//     input (or to what setItems left of it).
//
// Run applies one function config to a list of documents; Serve speaks the
// KRM function protocol (a ResourceList on stdin, one on stdout), so the
// binary can also be used as an exec function.
//
// # Inside a kustomize build
//
// kustomize (sigs.k8s.io/kustomize/api v0.21) offers no way to plug a
// function in process: its plugin loader (api/internal/plugins/loader) and
// function plugin (api/internal/plugins/fnplugin) are internal packages,
// and the runner they use (kyaml/runfn) picks a container or an exec
// program from the config's config.kubernetes.io/function annotation
// through an unexported provider. Runner therefore hands krusty a file
// system that rewrites, as files are read:
//
//   - every function annotation (container or exec, any image, also the
//     older config.k8s.io/function, config.kubernetes.io/container and
//     metadata.configFn forms, and configs written inline in a
//     kustomization) into an exec function that runs this same binary with
//     ServeEnv set;
//   - every non-builtin config without an annotation in a file a
//     kustomization lists under generators, transformers or validators
//     (which kustomize would look up as a legacy exec or Go plugin) the
//     same way;
//
// and enables function plugins and exec functions for the build. The
// binary must call ServeIfRequested first thing in main (TestMain in
// tests). ReplacementTransformer and Templater run; any other kind fails
// with an *UnsupportedFunctionError naming kind, name, file and image. No
// other program is ever run.
//
//	func main() {
//		if code, ok := fn.ServeIfRequested(); ok {
//			os.Exit(code)
//		}
//		// ... the CLI
//	}
//
//	// In the document layer (Runner satisfies document.FunctionRunner):
//	r := &fn.Runner{}
//	fs, opts, err := r.Wrap(filesys.MakeFsOnDisk(), krusty.MakeDefaultOptions())
//	if err != nil { ... }
//	resMap, err := krusty.MakeKustomizer(opts).Run(fs, "/site/phase")
//
//	// Or, to get the function's own error text back in the error rather
//	// than on stderr next to kustomize's "exit status 1":
//	resMap, err := r.Build(filesys.MakeFsOnDisk(), "/site/phase", nil)
//
//	// BuildSecrets also says whether the sops function ran, in which case
//	// the output must not be cached (document.SecretFunctionRunner):
//	resMap, secrets, err := r.BuildSecrets(filesys.MakeFsOnDisk(), "/site/phase", nil)
//
// fn.KustomizeOptions(fs) is r.Wrap with default options. The
// kustomization tree must be on disk (an in-memory tree works only where
// its directories also exist on disk), since kustomize runs exec functions
// in the kustomization's directory.
//
// # Upstream's kustomize semantics
//
// Upstream airshipctl built with kustomize API v0.8.11 and kyaml v0.11.
// Where a build with functions would differ under v0.21, Runner follows
// upstream (compat.go): a generator function's echo of its own
// local-config config is dropped from its output, and a builtin
// PatchTransformer in a transformers file that sets
// config.kubernetes.io/path (or index, or id) sets the internal twin too.
// Trees without functions build exactly as kubectl kustomize builds them.
//
// Generated key material never appears in an error: errors are scrubbed of
// PEM private keys before they are returned or printed.
package fn
