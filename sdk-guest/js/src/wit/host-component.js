// Inside the component: the host functions of the WIT contract. The build resolves `#wit/host`
// here (export condition `palisade-component`); plain Node gets ./host-node.js instead.
import * as host from 'palisade:plugin/host@0.2.0';

export { host };
