// Types of audit.mjs, for the test that imports it.
export declare function auditReport(output: string): { lines: string[]; fails: boolean };
