// Package secret is the one home of secret detection and redaction: the
// consolidator redacts transcripts before a model sees them and everything
// a model returns before it is written, and the change tracker refuses to
// commit a file that holds a secret.
//
// The rules are gitleaks' maintained default set (its config and detect
// packages, compiled once on first use) plus a few mindmount rules for the
// shapes people type into a chat rather than into code: "my password is …",
// card numbers (Luhn-checked), credentials in a URL, a private key pasted
// without its END line, and the broad API-key shapes (sk-…, AKIA…, documented
// example keys included) that gitleaks deliberately narrows to cut noise in
// source code. Scan reads a file's bytes in bounded memory, whatever it
// weighs, and what they encode too: UTF-16 text, gzip streams and base64
// runs are decoded and scanned, within a bound a gzip bomb cannot pass
// (LimitError). A finding names its rule and line, never the value; a
// redaction replaces the value with a marker naming the rule:
// "[REDACTED:stripe-access-token]".
package secret
