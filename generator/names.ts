/**
 * Entity names, display names and summaries.
 *
 * The first few entities of a type take names from a showcase list, so even a scale-1 bundle has
 * case variety (`Zeta`, `alpha`, `zeta`), accents, CJK, emoji, characters Go escapes (`&`, `<`,
 * `>`, U+2028), exact duplicates (ties) and placeholders (`Character 2112…`). Later entities draw
 * from syllables with the same ingredients at low rates.
 */
import type { Random } from './random.ts';
import type { EntityType } from './vocabulary.ts';

/** Marks a showcase slot that gets the type's placeholder name. */
const PLACEHOLDER = '\u0000placeholder';

const SHOWCASE: Partial<Record<EntityType, readonly string[]>> = {
  character: [
    'Zeta', 'alpha', 'Élodie Varga', '星野 あかり', 'Nova 🚀', PLACEHOLDER, 'Vesna Korr', 'Vesna Korr',
    'Tom & Jerry <3>', 'zeta', 'Søren Ødegård', '李小龙', 'Oren Tal', PLACEHOLDER, 'Ünal > Ürün',
  ],
  system: ['OKR-3T1', 'Zeta Prime', 'alpha Reach', 'K4T-9QX', 'K4T-9QX', PLACEHOLDER, 'Ødegaard Gate', '天河'],
  tribe: ['Ashen Choir', 'ashen choir', PLACEHOLDER, 'NPC Corp Vigil', '紅の旅団', 'Rust & Ruin'],
  constellation: ['Outer Ring', 'outer ring', 'Émeraude'],
  region: ['Ashen Reach', 'Zeta Expanse', 'alpha Drift'],
  enemy: ['Warden Drone [NPC]', 'Marauder [NPC]', 'Sentinel 🛰️ [NPC]', 'warden drone [NPC]'],
  assembly: ['Forward Depot ☄️', PLACEHOLDER, 'Depot <North>'],
  gate: ['Stargate Alpha', PLACEHOLDER, 'stargate beta', 'Gate Ω'],
  item: ['Tritanium Plate', PLACEHOLDER, 'Ångström Lens'],
  material: ['Veldspar Ore', 'veldspar ore'],
  ship: ['Reflex', 'Ökonom'],
  structure: ['Refinery', 'Smelter & Forge'],
  blueprint: ['Blueprint: Reflex', 'Blueprint: Tritanium Plate'],
  recipe: ['Recipe: Tritanium Plate', 'Recipe: Ångström Lens'],
};

const FIRST = ['Vesna', 'Oren', 'Mira', 'Kasimir', 'Ilya', 'Tamsin', 'Joro', 'Ayla', 'Brann', 'Cyra', 'Dax', 'Eiko', 'Fenna', 'Galen', 'Hollis', 'Isko'];
const LAST = ['Korr', 'Tal', 'Vance', 'Ruun', 'Okafor', 'Lindqvist', 'Marr', 'Sato', 'Quell', 'Varga', 'Nyx', 'Drummond', 'Halloran', 'Petrov'];
const ACCENTED = ['Élise Marchand', 'Zoë Ångström', 'Jörg Müller', 'Ñora Peña', 'Łukasz Wójcik', 'Ådne Ås'];
const CJK = ['星野 あかり', '李小龙', '김하늘', '山田 太郎', '陈静'];
const EMOJI = ['Nova 🚀', '✨ Stardust', 'Comet ☄️', 'Ghost 👻'];
const DUPLICATES = ['Vesna Korr', 'Oren Tal', 'alpha', 'Zeta', 'zeta'];
const WORDS = ['Ashen', 'Iron', 'Silent', 'Hollow', 'Crimson', 'Pale', 'Deep', 'Broken', 'Amber', 'Vigil', 'Frost', 'Ember'];
const NOUNS = ['Choir', 'Reach', 'Drift', 'Expanse', 'Ring', 'Veil', 'Spire', 'Hold', 'Circuit', 'Wake', 'Crown', 'Tide'];
const MATERIALS = ['Tritanium', 'Veldspar', 'Pyroxeres', 'Kernite', 'Zydrine', 'Isogen', 'Morphite', 'Nocxium'];
const THINGS = ['Plate', 'Lens', 'Coil', 'Frame', 'Cell', 'Array', 'Matrix', 'Core'];
const ENEMIES = ['Warden Drone', 'Marauder', 'Sentinel', 'Reaver', 'Husk', 'Stalker'];

/** Name-related fields of an entity. */
export interface Naming {
  name: string;
  displayName?: string;
  summary?: string;
  /** True when the name is a placeholder such as `Character 2112000041`. */
  placeholder: boolean;
}

/** The placeholder label of a type, e.g. `Character 2112000041`, `System 30000142`. */
export function placeholderName(entityType: EntityType, token: string): string {
  const number = token.replace(/^type:/, '');
  switch (entityType) {
    case 'item':
    case 'material':
      return `Input type ${number}`;
    default:
      return `${entityType.charAt(0).toUpperCase()}${entityType.slice(1).replace('_', ' ')} ${number}`;
  }
}

function systemName(random: Random): string {
  const letters = 'ABCDEFGHJKLMNOPQRSTUVWXYZ';
  const l = () => letters[random.int(letters.length)]!;
  return `${l()}${l()}${l()}-${random.int(10)}${l()}${random.int(10)}`;
}

function characterName(random: Random): string {
  const roll = random.next();
  if (roll < 0.03) return random.pick(DUPLICATES);
  if (roll < 0.05) return random.pick(ACCENTED);
  if (roll < 0.06) return random.pick(CJK);
  if (roll < 0.065) return random.pick(EMOJI);
  const name = `${random.pick(FIRST)} ${random.pick(LAST)}`;
  return roll < 0.12 ? name.toLowerCase() : name;
}

function generatedName(entityType: EntityType, token: string, random: Random): string {
  const number = token.replace(/^type:/, '');
  switch (entityType) {
    case 'character':
      return characterName(random);
    case 'system':
      return random.chance(0.04) ? random.pick(['K4T-9QX', 'OKR-3T1']) : systemName(random);
    case 'tribe':
      return random.chance(0.05) ? `NPC Corp ${random.pick(WORDS)}` : `${random.pick(WORDS)} ${random.pick(NOUNS)}`;
    case 'constellation':
    case 'region':
      return `${random.pick(WORDS)} ${random.pick(NOUNS)}${random.chance(0.5) ? ` ${random.between(2, 9)}` : ''}`;
    case 'enemy':
      return `${random.pick(ENEMIES)} ${random.pick(['Mk I', 'Mk II', 'Elite', 'Alpha'])} [NPC]`;
    case 'item':
    case 'material':
      return `${random.pick(MATERIALS)} ${entityType === 'item' ? random.pick(THINGS) : 'Ore'}`;
    case 'ship':
      return random.pick(['Reflex', 'Wend', 'Carom', 'Lorha', 'Maul', 'Tades']) + (random.chance(0.5) ? ` ${random.pick(['II', 'Prime', 'Lite'])}` : '');
    case 'structure':
      return `${random.pick(['Refinery', 'Smelter', 'Printer', 'Hangar', 'Shipyard'])} ${random.pick(['S', 'M', 'L', 'XL'])}`;
    case 'blueprint':
      return `Blueprint: ${random.pick(MATERIALS)} ${random.pick(THINGS)}`;
    case 'recipe':
      return `Recipe: ${random.pick(MATERIALS)} ${random.pick(THINGS)}`;
    case 'assembly':
      return random.chance(0.3) ? `${random.pick(WORDS)} Depot` : `Assembly ${number}`;
    case 'storage':
      return `Storage ${number}`;
    case 'turret':
      return `Turret ${number}`;
    case 'gate':
      return random.chance(0.4) ? `Stargate ${random.pick(WORDS)}` : `Gate ${number}`;
    case 'killmail':
      return `Killmail ${number}`;
    case 'resource_object':
      return `${random.pick(MATERIALS)} Deposit ${number}`;
    case 'site':
      return `Rift Site ${number.replace('rift-', '')}`;
    case 'unknown':
      return `Unknown object ${number}`;
    case 'player':
      return `Player ${number.slice(0, 10)}`;
    case 'alliance':
      return `${random.pick(WORDS)} Alliance`;
    case 'market':
      return `Market ${number}`;
    case 'route':
      return 'Route';
  }
}

const SUMMARIES: Partial<Record<EntityType, readonly string[]>> = {
  character: ['Pilot identity taken from chain events.', 'Capsuleer seen in killmails & gate jumps.'],
  system: ['Static-client solar system.', 'Solar system from the universe tables.'],
  tribe: ['Player tribe from chain events.', 'Tribe with a public profile.'],
  killmail: ['Killmail derived from chain events.'],
  enemy: ['Reviewed static enemy type.'],
  assembly: ['Deployable assembly observed on chain.'],
  gate: ['Smart gate observed on chain.'],
  route: ['Gate-to-gate route seen in jump events.'],
};

/** Names an entity; `typeIndex` selects a showcase name for the first few of each type. */
export function nameEntity(entityType: EntityType, typeIndex: number, token: string, random: Random): Naming {
  const showcase = SHOWCASE[entityType]?.[typeIndex];
  const placeholder = showcase === PLACEHOLDER
    || (showcase === undefined && ['character', 'system', 'tribe', 'item'].includes(entityType) && random.chance(0.06));
  const name = placeholder ? placeholderName(entityType, token) : (showcase ?? generatedName(entityType, token, random));
  const naming: Naming = { name, placeholder };
  const roll = random.next();
  if (placeholder) {
    if (roll < 0.5) naming.displayName = name;
  } else if (roll < 0.6) {
    naming.displayName = name;
  } else if (roll < 0.72) {
    naming.displayName = `${name} [${random.pick(['ASH', 'VGL', 'IRN', 'ΩMG'])}]`;
  }
  if (entityType === 'character' && typeIndex === 2) {
    // Every character a CSV field must quote (`,`, `"`, LF, CR) and the ones Go escapes (`&`, `<`, U+2028).
    naming.summary = 'Pilot from Lyon, "the old port" & Marseille\r\nsecond line\u2028third <b>bold</b>';
  } else if (random.chance(0.45)) {
    naming.summary = random.pick(SUMMARIES[entityType] ?? [`A ${entityType.replace('_', ' ')} known to the registry.`]);
  }
  return naming;
}
