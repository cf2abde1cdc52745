/** The option error (`optionError`, `isOptionError`): the contract's, where the hooks' error rules see it too. */
export { isOptionError, optionError } from '../../contract/option-error.js';
