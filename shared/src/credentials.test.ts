import { describe, expect, it } from 'vitest';
import { withoutPasswords } from './credentials';

describe('withoutPasswords', () => {
  it('drops the password of a URL and keeps its user name', () => {
    expect(withoutPasswords('http://apiuser:APIPASSWORD@127.0.0.1:8081/x')).toBe('http://apiuser@127.0.0.1:8081/x');
    expect(withoutPasswords('postgres://leads:s3cret@db:5432/leads')).toBe('postgres://leads@db:5432/leads');
  });

  it('drops a password that holds "@" or ":" whole', () => {
    expect(withoutPasswords('https://u:p@ss:w@host/leads')).toBe('https://u@host/leads');
  });

  it('every URL of a line, the rest unchanged', () => {
    expect(
      withoutPasswords('request to http://a:one@h1/bot123:[REDACTED]/getMe failed, reason: ECONNREFUSED; see https://b:two@h2?q=1'),
    ).toBe('request to http://a@h1/bot123:[REDACTED]/getMe failed, reason: ECONNREFUSED; see https://b@h2?q=1');
  });

  it('leaves a URL without a password alone', () => {
    for (const url of ['https://api.telegram.org', 'http://user@host/x', 'http://host/a:b@c', 'http://host?x=a:b@c', 'not a url'])
      expect(withoutPasswords(url)).toBe(url);
  });
});
