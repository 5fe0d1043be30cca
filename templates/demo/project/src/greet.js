// Greets people in the languages the app supports.

export function greet(name, language = 'en') {
  const who = name.trim();
  if (language === 'fr') {
    return `Bonjour, ${who}!`;
  }
  return `Hello, ${who}!`;
}

export function farewell(name, language = 'en') {
  const who = name.trim();
  if (language === 'fr') {
    return `Au revoir, ${who}!`;
  }
  return `Goodbye, ${who}!`;
}
