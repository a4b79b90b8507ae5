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
//     context in KCTL_CONTEXT, envVars, RENDERED_BUNDLE_PATH);
//   - container runtime: any other image runs with docker or podman,
//     whichever is on PATH, from a command line built from the spec.
//
// phase render prints the plan and the input documents; phase status
// reads the last run's result from a small state file (StateDir).
package genericcontainer
