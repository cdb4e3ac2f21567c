// Package playground lets people try SNS filter policies without a topic:
// it validates a policy as SetSubscriptionAttributes would and explains,
// key by key, whether a message passes it.
//
// It has three faces sharing one evaluation (Evaluate):
//
//   - POST /_fanout/filter/test, a JSON endpoint (Routes);
//   - GET /_fanout/playground, a page embedded in the binary that calls
//     the endpoint as the user types (Routes);
//   - the `fanout filter` subcommand, which prints the same result as
//     text (WriteText).
package playground
