/**
 * The words judges use for the guards' labels, one table per guard, in one place. Each table maps
 * a canonical label (the one the guard's options and defaults use) to other spellings a model
 * writes for it. Case, spaces, `_`, `-`, `/`, `.` and camelCase never need an entry: labels are
 * compared by {@link labelKey} (`self_harm`, `Self Harm`, `selfHarm` and `self-harm` are one key).
 * An entry is only needed for a different word (`card` for `credit-card`, `dob` for
 * `date-of-birth`).
 */

/** Synonyms per canonical label. */
export type SynonymTable = Readonly<Record<string, readonly string[]>>;

/** ModerationProcessor: the OpenAI moderation categories and the words models use for them. */
export const MODERATION_SYNONYMS: SynonymTable = {
  hate: ['hate speech', 'hateful', 'hateful content', 'hatred'],
  'hate/threatening': ['threatening hate', 'hateful threats', 'hate threat'],
  harassment: ['harassing', 'bullying', 'abuse', 'abusive', 'insult', 'insults', 'toxic', 'toxicity'],
  'harassment/threatening': ['threat', 'threats', 'threatening', 'threatening harassment', 'harassment threat'],
  'self-harm': ['self harm', 'self injury', 'self-injury', 'suicide', 'suicidal', 'self harm content'],
  'self-harm/intent': ['suicidal intent', 'self harm intention', 'intent to self harm', 'suicidal ideation'],
  'self-harm/instructions': ['self harm instruction', 'suicide instructions', 'self harm how to', 'suicide methods'],
  sexual: ['sexual content', 'sex', 'sexually explicit', 'explicit', 'nsfw', 'adult', 'adult content', 'nudity', 'porn', 'pornography'],
  'sexual/minors': ['csam', 'child sexual abuse', 'child sexual content', 'sexual content involving minors', 'minors', 'child abuse'],
  violence: ['violent', 'violent content', 'violence content', 'physical harm'],
  'violence/graphic': ['graphic violence', 'gore', 'gory', 'graphic', 'graphic content'],
};

/** PIIDetector: the default PII types and the words models use for them. */
export const PII_SYNONYMS: SynonymTable = {
  email: ['e-mail', 'email address', 'e-mail address', 'mail', 'mail address', 'email addr'],
  phone: ['phone number', 'telephone', 'telephone number', 'tel', 'mobile', 'mobile number', 'mobile phone', 'cell', 'cell phone', 'cellphone number', 'fax'],
  'credit-card': ['credit card number', 'card', 'card number', 'cc', 'cc number', 'payment card', 'debit card', 'bank card', 'credit card no', 'pan'],
  ssn: ['social security number', 'social security', 'social security no', 'us ssn', 'national insurance number', 'national id', 'national id number'],
  passport: ['passport number', 'passport no', 'passport id'],
  iban: ['iban number', 'bank account', 'bank account number', 'account number', 'international bank account number'],
  'ip-address': ['ip', 'ipv4', 'ipv6', 'ip addr', 'ipv4 address', 'ipv6 address'],
  'api-key': ['api key', 'apikey', 'api token', 'access token', 'secret key', 'secret', 'token', 'access key', 'auth token', 'bearer token', 'private key', 'credential', 'credentials'],
  name: ['person', 'person name', 'personal name', 'full name', 'first name', 'last name', 'surname', 'given name', 'family name'],
  address: ['street address', 'postal address', 'home address', 'mailing address', 'physical address', 'residential address'],
  'date-of-birth': ['dob', 'birth date', 'birthdate', 'birthday', 'date of birth', 'born on'],
};

/** PromptInjectionDetector: the default attack types and the words models use for them. */
export const INJECTION_SYNONYMS: SynonymTable = {
  injection: ['prompt injection', 'instruction injection', 'indirect injection', 'indirect prompt injection'],
  jailbreak: ['jail break', 'jailbreaking', 'jailbreak attempt', 'dan'],
  'system-override': ['system prompt override', 'instruction override', 'override', 'override instructions', 'ignore instructions', 'system override attempt'],
  'role-manipulation': ['role play', 'roleplay', 'role change', 'persona manipulation', 'persona', 'role hijacking', 'impersonation'],
  'tool-exfiltration': ['tool misuse', 'tool abuse', 'tool manipulation', 'tool exploitation'],
  'data-exfiltration': ['exfiltration', 'data leak', 'data leakage', 'prompt leak', 'prompt leaking', 'system prompt leak', 'prompt extraction', 'system prompt extraction'],
};

/**
 * LanguageDetector: ISO 639-1 codes and the names (English and native) and ISO 639-2/3 codes models
 * write for them.
 */
export const LANGUAGE_SYNONYMS: SynonymTable = {
  en: ['english', 'eng'],
  fr: ['french', 'francais', 'français', 'fra', 'fre'],
  de: ['german', 'deutsch', 'deu', 'ger'],
  es: ['spanish', 'espanol', 'español', 'castilian', 'spa'],
  it: ['italian', 'italiano', 'ita'],
  pt: ['portuguese', 'portugues', 'português', 'por'],
  nl: ['dutch', 'nederlands', 'flemish', 'nld', 'dut'],
  ru: ['russian', 'русский', 'rus'],
  zh: ['chinese', 'mandarin', '中文', 'zho', 'chi', 'cmn'],
  ja: ['japanese', '日本語', 'jpn'],
  ko: ['korean', '한국어', 'kor'],
  ar: ['arabic', 'العربية', 'ara'],
  hi: ['hindi', 'हिन्दी', 'hin'],
  pl: ['polish', 'polski', 'pol'],
  tr: ['turkish', 'türkçe', 'tur'],
  sv: ['swedish', 'svenska', 'swe'],
  uk: ['ukrainian', 'українська', 'ukr'],
  cs: ['czech', 'čeština', 'ces', 'cze'],
  el: ['greek', 'ελληνικά', 'ell', 'gre'],
  he: ['hebrew', 'עברית', 'heb', 'iw'],
  da: ['danish', 'dansk', 'dan'],
  fi: ['finnish', 'suomi', 'fin'],
  no: ['norwegian', 'norsk', 'nor', 'nb', 'nn', 'bokmal', 'bokmål'],
  vi: ['vietnamese', 'tiếng việt', 'vie'],
};
