// PLACEHOLDER, replaced by h28service's client of the signer service (SPEC §7): it lets this branch
// compile and refuses to sign. The real file keeps this constructor and the RemoteSigner shape.
import type { SignerServiceKeyConfig } from '../../domain.js';
import type { MessageTemplates } from '../message.js';
import { SignerRefused, type SignAction, type SignResult, type WalletSigner } from '../port.js';

export class SignerServiceClient implements WalletSigner {
  readonly backend = 'signer' as const;

  constructor(
    readonly config: SignerServiceKeyConfig,
    readonly address: string,
    readonly templates: MessageTemplates,
  ) {}

  connect(_signal: AbortSignal): Promise<void> {
    return Promise.reject(new SignerRefused('SIGNER_UNAVAILABLE', 'the signer service client is not built in this version'));
  }

  sign(_action: SignAction, _signal: AbortSignal): Promise<SignResult> {
    return Promise.reject(new SignerRefused('SIGNER_UNAVAILABLE', 'the signer service client is not built in this version'));
  }
}
