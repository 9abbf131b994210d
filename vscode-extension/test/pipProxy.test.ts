// VS Code's http.proxy and http.proxyStrictSSL as pip's environment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hideCredentials, pipProxy } from '../src/pipProxy';

test('no proxy and strict SSL (the defaults): pip gets nothing new', () => {
  assert.deepEqual(pipProxy({ proxy: '', strictSSL: true }, {}), { env: {}, notes: [] });
  assert.deepEqual(pipProxy({ proxy: '   ', strictSSL: true }, {}), { env: {}, notes: [] });
});

test('http.proxy becomes PIP_PROXY; the log never shows its password', () => {
  const p = pipProxy({ proxy: 'http://me:s3cret@proxy.corp:3128', strictSSL: true }, {});
  assert.deepEqual(p.env, { PIP_PROXY: 'http://me:s3cret@proxy.corp:3128' });
  assert.deepEqual(p.notes, ["pip uses VS Code's http.proxy http://me:***@proxy.corp:3128."]);
  assert.equal(hideCredentials('http://proxy.corp:3128'), 'http://proxy.corp:3128');
});

test('http.proxyStrictSSL off: pip trusts the index it uses (PyPI unless PIP_INDEX_URL says another)', () => {
  const pypi = pipProxy({ proxy: 'http://proxy:3128', strictSSL: false }, {});
  assert.equal(pypi.env.PIP_TRUSTED_HOST, 'pypi.org files.pythonhosted.org');
  assert.equal(pypi.notes[1], 'http.proxyStrictSSL is off: pip does not check the certificates of pypi.org, files.pythonhosted.org.');
  const mirror = pipProxy(
    { proxy: '', strictSSL: false },
    { PIP_INDEX_URL: 'https://mirror.corp/simple', PIP_EXTRA_INDEX_URL: 'https://extra.corp/simple not-a-url', PIP_TRUSTED_HOST: 'old.corp' },
  );
  assert.deepEqual(mirror.env, { PIP_TRUSTED_HOST: 'old.corp mirror.corp extra.corp' });
});
