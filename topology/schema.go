package topology

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of the file format, for
// editors to complete and check topology files with.
//
//go:embed schema.json
var Schema []byte
