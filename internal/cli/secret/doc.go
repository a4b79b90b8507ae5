// Package secret is `airshipctl secret encrypt|decrypt`: SOPS encryption of
// the documents of a YAML file with age and PGP keys, in the form the
// built-in sops KRM function (gcr.io/kpt-fn-contrib/sops) decrypts during
// a build, so that secrets can be prepared without other tools.
package secret
