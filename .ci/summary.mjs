// Prints the plain closing line CI reads ("tests: N passed, N failed, N skipped") and names
// every skipped suite, so a skip is never silent.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('tests: 0 passed, 1 failed');
  console.error(`no test report at ${file}`);
  process.exit(1);
}
const skippedTitles = new Set();
for (const suite of report.testResults ?? []) {
  for (const test of suite.assertionResults ?? []) {
    if (test.status === 'skipped' || test.status === 'pending') skippedTitles.add(test.ancestorTitles?.[0] ?? suite.name);
  }
}
for (const title of skippedTitles) console.log(`skipped: ${title}`);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
process.exit(report.numFailedTests > 0 || report.numTotalTests === 0 ? 1 : 0);
