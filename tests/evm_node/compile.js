// Compiles LogReplay.sol with solc-js (npm "solc", installed by `make tools`) and prints
// {compiler, abi, runtime} as JSON. Usage: node compile.js <solc module dir> <LogReplay.sol>
const solc = require(process.argv[2]);
const fs = require('fs');
const src = fs.readFileSync(process.argv[3], 'utf8');
const input = {language: 'Solidity', sources: {'LogReplay.sol': {content: src}},
  settings: {optimizer: {enabled: true, runs: 200}, evmVersion: 'paris',
    outputSelection: {'*': {'*': ['abi', 'evm.deployedBytecode.object']}}}};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
if (out.errors && out.errors.some(e => e.severity === 'error')) { console.error(JSON.stringify(out.errors)); process.exit(1); }
const c = out.contracts['LogReplay.sol']['LogReplay'];
console.log(JSON.stringify({compiler: solc.version(), abi: c.abi, runtime: '0x' + c.evm.deployedBytecode.object}));
