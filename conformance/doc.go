// Package conformance holds a Ginkgo suite that checks SQS and SNS behaviour
// against fanout (in-process, the default), any SNS/SQS emulator
// (FANOUT_CONFORMANCE_ENDPOINT=http://host:port) or AWS itself
// (FANOUT_CONFORMANCE_TARGET=aws). Every spec is written to hold on AWS and
// cites its evidence; specs labelled "emulator-only" need fanout's clock or
// admin API and are skipped, with the reason, on other targets, and specs
// labelled "loopback" run an HTTP subscriber on 127.0.0.1 and are skipped on
// AWS. The suite is how fanout is held to AWS's behaviour, not to its own.
//
// Run it with `go test ./conformance/...`, or in parallel with
// `go tool ginkgo -p ./conformance`. Every queue and topic a run creates is
// named with a random per-run prefix and deleted when its spec ends.
// cmd/parity runs it against fanout and other emulators and renders the
// parity table of the README.
package conformance
