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
//   - the sops function (a ConfigMap whose annotation names
//     gcr.io/kpt-fn-contrib/sops, any tag) decrypts or encrypts documents
//     with PGP and age keys from the environment (sops.go,
//     docs/secrets.md).
//
// Run applies one function config to a list of documents in process;
// DecodeResourceList reads the KRM function protocol's ResourceList.
// Nothing in this package executes a program.
//
// # Inside a kustomize build
//
// Every kustomize build of the project takes its options from
// KrustyOptions: builtin plugins only (types.PluginRestrictionsBuiltinsOnly),
// exec functions off, Helm chart inflation off. kustomize itself then
// refuses any exec, container, starlark, Go or legacy exec plugin.
//
// The built-in functions are not kustomize plugins: Runner hands krusty a
// file system that, when kustomize reads a kustomization, decodes it (and
// each of its generators, transformers and validators: inline YAML
// entries, files, and directories, which it builds) and classifies every
// config after YAML decoding, so no spelling of an annotation key in a
// file matters:
//
//   - apiVersion builtin: kustomize's own; passed through (except
//     HelmChartInflationGenerator, refused, as is a helmCharts field);
//   - airshipit.org/v1alpha1 ReplacementTransformer or Templater, or a
//     config whose function annotation (config.kubernetes.io/function,
//     config.k8s.io/function, config.kubernetes.io/container,
//     metadata.configFn) names the sops image: a built-in function;
//   - anything else (another kind or image, an exec: spec whatever the
//     kind, a function among validators): an *UnsupportedFunctionError
//     naming kind, name, file and image.
//
// A kustomization without function configs is served as it is. One with
// a function is built in stages: the kustomization truncated before the
// function (all fields it needs kept: for a generator, the resources and
// generators before it; for a transformer, everything but the
// transformers after it) is built by krusty; the function runs in process
// on the result (a generator gets no input, and its output joins the
// resources); and kustomize is served a kustomization whose resources are
// the result, through a file only this build serves, and whose generators
// and transformers are what remains. The next function is handled the same
// way. A stage is a whole krusty build, which would finish as a top-level
// build does; builtin transformers appended to each stage keep what the
// real build carries on (kustomize's previous names, prefixes and
// suffixes, the hash-suffix request, generator behaviour, local-config
// documents and their origin annotations) and Runner puts it back, so the
// output is kustomize's, step for step (TestStagedBuildMatchesKustomize).
// A Component listing a function config is an error.
//
//	resMap, err := (&fn.Runner{}).Build(filesys.MakeFsOnDisk(), "/site/phase", nil)
//
//	// BuildSecrets also says whether the sops function ran, in which case
//	// the output must not be cached (document.SecretFunctionRunner):
//	resMap, secrets, err := (&fn.Runner{}).BuildSecrets(filesys.MakeFsOnDisk(), "/site/phase", nil)
//
// Any file system works, on disk or in memory: functions run in process.
// A failing function's own error is the build's error.

// # Upstream's kustomize semantics
//
// Upstream airshipctl built with kustomize API v0.8.11 and kyaml v0.11.
// Where a build with functions would differ under v0.21, Runner follows
// upstream (compat.go): a generator function's echo of its own
// local-config config is dropped from its output. Functions see documents
// as the build left them, fields in their written order (kustomize's exec
// protocol sorted them), so a SOPS MAC over a document in any field order
// verifies. Trees without functions build exactly as kubectl kustomize
// builds them.
//
// Generated key material never appears in an error: errors are scrubbed of
// PEM private keys before they are returned or printed.
package fn
