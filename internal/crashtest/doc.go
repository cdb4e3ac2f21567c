// Package crashtest holds the kill -9 test of fanout with a data dir
// (issue 14): its test builds the fanout binary, runs SQS and SNS clients
// against it, kills it with SIGKILL at random moments, restarts it on the
// same dir and checks what the clients were told against what fanout holds.
// Run the long loop with FANOUT_CRASH_CYCLES=200 go test -run Crash ./internal/crashtest/.
package crashtest
