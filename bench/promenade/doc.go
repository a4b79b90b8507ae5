// Package promenade benchmarks Promenade's PKI generation: the example
// site's catalog (6 CAs, 31 certificates and a service-account keypair, 38
// items) with ECDSA P-256 and RSA-2048 keys, by the `promenade
// generate-certs` binary and by the openssl command line, both writing the
// same PEM files, on one core and on all of them. Both outputs are read
// back and put through the same checks (checkCatalog).
//
//	go test ./bench/promenade -run '^$' -bench Catalog -benchtime 3x
package promenade
