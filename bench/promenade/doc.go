// Package promenade benchmarks Promenade's PKI generation: the example
// site's catalog (6 CAs, 31 certificates and a service-account keypair, 38
// items) with ECDSA P-256 and RSA-2048 keys, against the openssl command
// line generating the same keys and certificates in the same run.
//
//	go test ./bench/promenade -run '^$' -bench . -benchtime 3x
package promenade
