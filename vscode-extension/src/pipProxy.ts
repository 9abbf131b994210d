// VS Code's proxy settings for the pip runs that install the bundled server: `http.proxy` becomes
// PIP_PROXY and `http.proxyStrictSSL: false` makes pip trust the package index's hosts without
// checking their certificates (PIP_TRUSTED_HOST), as VS Code itself then does. Environment
// variables rather than options, so that the pip that builds the core from the sdist (in an
// isolated build environment) inherits them too. Pure: the caller passes the settings.

export interface ProxySettings {
  /** `http.proxy`: "http://proxy.example:3128", with user:password@ when it needs them. */
  proxy: string;
  /** `http.proxyStrictSSL`. */
  strictSSL: boolean;
}

/** PyPI's hosts: the index and the files it links to. */
const PYPI_HOSTS = ['pypi.org', 'files.pythonhosted.org'];

export interface PipProxy {
  /** Variables to add to pip's environment. */
  env: Record<string, string>;
  /** What was done, for the log (a proxy's password is never shown). */
  notes: string[];
}

/** "http://user:secret@host:3128" → "http://user:***@host:3128". */
export function hideCredentials(url: string): string {
  return url.replace(/^([a-z][\w+.-]*:\/\/)([^/@:]*):([^/@]*)@/i, '$1$2:***@');
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) {
    return undefined;
  }
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

/** The variables that carry VS Code's proxy settings to pip, given the environment pip gets. */
export function pipProxy(settings: ProxySettings, env: NodeJS.ProcessEnv): PipProxy {
  const out: Record<string, string> = {};
  const notes: string[] = [];
  const proxy = settings.proxy.trim();
  if (proxy) {
    out.PIP_PROXY = proxy;
    notes.push(`pip uses VS Code's http.proxy ${hideCredentials(proxy)}.`);
  }
  if (!settings.strictSSL) {
    // The index pip is told to use (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL), else PyPI.
    const urls = [env.PIP_INDEX_URL, ...(env.PIP_EXTRA_INDEX_URL ?? '').split(/\s+/)];
    const named = urls.map(hostOf).filter((h): h is string => h !== undefined);
    const hosts = [...new Set([...(env.PIP_TRUSTED_HOST ?? '').split(/\s+/).filter(Boolean), ...(env.PIP_INDEX_URL ? [] : PYPI_HOSTS), ...named])];
    out.PIP_TRUSTED_HOST = hosts.join(' ');
    notes.push(`http.proxyStrictSSL is off: pip does not check the certificates of ${hosts.join(', ')}.`);
  }
  return { env: out, notes };
}
