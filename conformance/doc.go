// Package conformance holds a Ginkgo suite that checks SQS and SNS behaviour
// against fanout or, with FANOUT_CONFORMANCE_TARGET=aws, against AWS itself.
// Every spec that is not labelled "emulator-only" must pass on both: the
// suite is how fanout is held to AWS's behaviour, not to its own.
//
// Run it with `go test ./conformance/...`. Against AWS the SDK's default
// credential chain and region are used and every queue and topic the suite creates is
// named with a random per-run prefix and deleted when its spec ends.
package conformance
