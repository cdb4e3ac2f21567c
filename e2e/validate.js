// validate.js checks SNS messages with sns-validator, the validator many
// Node.js subscribers use. Usage:
//
//   node validate.js HOST_PATTERN FILE...
//
// HOST_PATTERN is a regular expression for the host (and port) of the
// SigningCertURL; each FILE holds one message as delivered: an HTTP/S
// envelope, or the "Sns" object of a Lambda event. It prints one line per
// file and exits 1 if any message does not validate.
'use strict';

const fs = require('fs');
const MessageValidator = require('sns-validator');

const [pattern, ...files] = process.argv.slice(2);
if (!pattern || files.length === 0) {
  console.error('usage: node validate.js HOST_PATTERN FILE...');
  process.exit(2);
}
const validator = new MessageValidator(new RegExp(pattern));

function check(file) {
  return new Promise((resolve) => {
    const text = fs.readFileSync(file, 'utf8');
    validator.validate(text, (err, message) => {
      if (err) {
        console.log(`invalid ${file}: ${err.message}`);
        resolve(false);
        return;
      }
      console.log(`valid ${message.Type} ${message.MessageId} (${file})`);
      resolve(true);
    });
  });
}

(async () => {
  let ok = true;
  for (const f of files) {
    ok = (await check(f)) && ok;
  }
  process.exit(ok ? 0 : 1);
})();
