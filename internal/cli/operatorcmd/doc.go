// Package operatorcmd is the command line of every operator binary: New
// (and Main, which runs it and returns the exit code) builds it from a
// Spec — the binary's name and help, and its operator's options type with
// their defaults, flag binding, checks and Run. What every operator binary
// shares is here: its Go flags, --kubeconfig, zap logging flags, the
// version subcommand, finding the cluster in a pod or out of one, and the
// leader election namespace taken from the kubeconfig's context when run
// outside a pod (default when the context names none, as kubectl picks a
// namespace; in a pod it is the pod's namespace).
//
// On the same framework as airshipctl and promenade (cli.Run): --help
// exits 0, a bad flag exits 2 with the usage, an error exits 1, `version`
// prints what the binary was built with. One table test covers the command
// lines of the three binaries, each with its operator replaced.
package operatorcmd
