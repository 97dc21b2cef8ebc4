// Runs dependency-cruiser's rules (.dependency-cruiser.cjs) over the given folders and prints its report:
// `node scripts/depcruise.mjs [--config file] [--output-type err|json|…] [folders…]` (default: server/src shared/src).
// The package's own command refuses Node 20, which this repository supports; its API runs there, so this calls it.
// Exits 1 on any violation of severity error.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    config: { type: 'string', default: '.dependency-cruiser.cjs' },
    'output-type': { type: 'string', default: 'err' },
  },
});

const options = await extractDepcruiseOptions(resolve(values.config));
const tsConfigFile = options.ruleSet?.options?.tsConfig?.fileName;
const tsConfig = tsConfigFile ? extractTSConfig(tsConfigFile) : undefined;
const result = await cruise(
  positionals.length > 0 ? positionals : ['server/src', 'shared/src'],
  { ...options, outputType: values['output-type'] },
  {},
  { tsConfig },
);
process.stdout.write(typeof result.output === 'string' ? result.output : JSON.stringify(result.output));
process.exitCode = result.exitCode > 0 ? 1 : 0;
