// Package genericcontainer is the GenericContainer executor
// (airshipit.org/v1alpha1): it runs an image over a phase's documents the
// way upstream airshipctl does, without needing a container runtime for
// the images it can stand in for.
//
// Each run is planned first (Plan), and the plan says how the image runs:
//
//   - built-in: images whose KRM function is built in (templater,
//     replacement-transformer, sops; fn.BuiltinImage) run in process over
//     the phase's documents with config as their functionConfig;
//   - local script: Airship's toolbox images (toolbox, toolbox-virsh) run
//     their config's script with bash and the tools on PATH, in a
//     temporary directory, with the environment upstream's container gets
//     (a private copy of the cluster's kubeconfig in KUBECONFIG, the
//     context in KCTL_CONTEXT, envVars, RENDERED_BUNDLE_PATH) and of
//     airshipctl's own only PATH and HOME;
//   - container runtime: any other image runs with docker or podman,
//     whichever is on PATH, from a command line built from the spec.
//
// A site is code at phase run, and this executor is where it runs, as
// the user running airshipctl. What the site may not do is refused before
// anything runs, naming the document and the field (sandbox.go):
//
//   - envVars that steer the shell or the loader (BASH_ENV, ENV,
//     SHELLOPTS, BASH_FUNC_*, LD_*, ...) in any form, and name-only SOPS_*
//     entries unless $AIRSHIP_PASS_ENV lists them (the user's consent);
//   - a sinkOutputDir that is absolute or leads outside the site
//     directory, by .. or a symbolic link; output files are staged and
//     copied in without following links, so none lands outside the site;
//   - for scripts, an rw: false bind mount is a read-only copy made for
//     the run (at most MaxReadOnlyCopyBytes; a link out of the source is
//     refused), so what the script writes there reaches nothing.
//
// phase render prints the plan and the input documents; phase status
// reads the last run's result from a small state file (StateDir).
package genericcontainer
