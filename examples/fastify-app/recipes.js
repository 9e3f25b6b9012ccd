// The app's data: in a real app this would come from a database.
export const recipes = [
  { slug: 'shakshuka', title: 'Shakshuka', minutes: 30, image: 'pan.svg', summary: 'Eggs poached in a spiced tomato and pepper sauce.', steps: ['Soften onion and peppers.', 'Add tomatoes, cumin and paprika; simmer 10 minutes.', 'Make wells, crack in the eggs, cover until set.'] },
  { slug: 'miso-soup', title: 'Miso soup', minutes: 15, image: 'bowl.svg', summary: 'Dashi, miso, tofu and spring onion.', steps: ['Warm the dashi without boiling.', 'Whisk in the miso off the heat.', 'Add tofu and spring onion.'] },
  { slug: 'focaccia', title: 'Focaccia', minutes: 180, image: 'bread.svg', summary: 'A soft, dimpled olive-oil bread.', steps: ['Mix flour, water, yeast and salt.', 'Fold every 30 minutes, four times.', 'Dimple, drizzle with oil, bake at 230 °C for 20 minutes.'] },
];

export function findRecipe(slug) {
  return recipes.find((recipe) => recipe.slug === slug);
}
