import { describe, expect, it } from 'vitest';
import { parseCsvRecord } from '../../src/audit/csv.js';

describe('parseCsvRecord: one strict RFC 4180 record', () => {
  it('reads plain and quoted fields, doubled quotes and commas inside quotes', () => {
    expect(parseCsvRecord('1,a,"b,c","say ""hi""",')).toEqual(['1', 'a', 'b,c', 'say "hi"', '']);
  });
  it('refuses a stray quote inside an unquoted field', () => {
    expect(parseCsvRecord('1,a"b,c')).toBeNull();
  });
  it('refuses a quoted field that never closes', () => {
    expect(parseCsvRecord('1,"abc')).toBeNull();
  });
  it('refuses text after a closing quote', () => {
    expect(parseCsvRecord('1,"ab"c,d')).toBeNull();
  });
  it('refuses two records in one line', () => {
    expect(parseCsvRecord('1,2\r\n3,4')).toBeNull();
  });
});
